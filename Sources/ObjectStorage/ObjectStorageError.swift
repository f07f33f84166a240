/// Why a request to the store failed, for people: the operation, the object,
/// the store's status and error code, and what to do. Never a credential:
/// the messages are made from the request's method, bucket and key and the
/// store's answer, never from its headers.
package struct ObjectStorageError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, for a caller's decision (as `DeviceCheckError.Kind`).
    package enum Kind: Sendable, Hashable {
        /// The credentials, region or endpoint in the environment cannot be used.
        case configuration
        /// The store answered with an error (`status` and `code` say which).
        case refused
        /// No answer: the store could not be reached, after the retries.
        case unreachable
        /// The task was cancelled.
        case cancelled
    }

    package var kind: Kind
    package var description: String
    /// The HTTP status, when the store answered.
    package var status: Int?
    /// The store's error code (`NoSuchBucket`, `AccessDenied`, …), when it sent one.
    package var code: String?

    package init(_ kind: Kind, _ description: String, status: Int? = nil, code: String? = nil) {
        (self.kind, self.description, self.status, self.code) = (kind, description, status, code)
    }

    /// What to do about the common refusals.
    static func advice(code: String?, status: Int) -> String {
        switch code {
        case "InvalidAccessKeyId": "the store does not know AWS_ACCESS_KEY_ID; check it and AWS_ENDPOINT_URL"
        case "SignatureDoesNotMatch": "check AWS_SECRET_ACCESS_KEY, and AWS_REGION (R2 takes auto)"
        case "AccessDenied":
            "the credentials may not do this; grant s3:GetObject, s3:PutObject and s3:DeleteObject on the prefix"
        case "NoSuchBucket": "create the bucket first, or check its name and AWS_ENDPOINT_URL"
        case "RequestTimeTooSkewed": "this machine's clock is off by more than 15 minutes; set it (timedatectl)"
        case "ExpiredToken", "InvalidToken": "AWS_SESSION_TOKEN has expired; get new temporary credentials"
        case "PermanentRedirect", "AuthorizationHeaderMalformed":
            "the bucket is in another region; set AWS_REGION to it"
        default: status >= 500 ? "the store failed; try again later" : "see the store's message"
        }
    }
}
