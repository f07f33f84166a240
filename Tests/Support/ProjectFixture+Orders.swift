import Foundation

extension TestPKI {
    /// The order type identifier of the test orders (an Order Type ID certificate: `leaf(passType: orderType)`).
    public static let orderType = "order.com.example.test"
}

extension ProjectFixture {
    /// Adds the order template `shop` (order.json with a logo and a product image, 300 × 300 as Apple
    /// asks) and `signing:` for `TestPKI.orderType` with the test PKI's Order Type ID leaf.
    public func addOrderTemplate() {
        directory.write(
            "templates/shop/order.json",
            """
            {
              "orderTypeIdentifier": "\(TestPKI.orderType)",
              "orderType": "ecommerce",
              "orderManagementURL": "https://shop.example.com/orders/{{ orderIdentifier }}",
              "status": "{{ status }}",
              "createdAt": "2026-11-20T14:05:00+01:00",
              "merchant": {
                "displayName": "Northwind Home",
                "merchantIdentifier": "merchant.com.example.northwind",
                "url": "https://shop.example.com/",
                "logo": "logo"
              },
              "lineItems": [{"title": "Mug", "quantity": 2, "image": "mug", "price": {"amount": "9.95", "currency": "EUR"}}],
              "fulfillments": [{
                "fulfillmentType": "shipping", "fulfillmentIdentifier": "{{ orderIdentifier }}-1", "status": "{{ shipping }}",
                "carrier": "PostNord", "trackingNumber": "0037"
              }],
              "payment": {"total": {"amount": "19.90", "currency": "EUR"}, "status": "paid"}
            }
            """)
        directory.write("templates/shop/logo.png", bytes: PNGFactory.png(width: 300, height: 300))
        directory.write("templates/shop/mug.png", bytes: PNGFactory.png(width: 300, height: 300))
        let leaf = TestPKI.shared.leaf(passType: TestPKI.orderType)
        let configuration = (try? String(contentsOfFile: directory.file("passforge.yml"), encoding: .utf8)) ?? ""
        directory.write(
            "passforge.yml",
            configuration + """

                signing:
                  \(TestPKI.orderType):
                    certificate: \(leaf.certificate)
                    key: \(leaf.key)
                """)
    }

    /// `content/orders/<identifier>.yml`: one order of the `shop` template.
    public func writeOrder(_ identifier: String, status: String = "open", shipping: String = "onTheWay") {
        directory.write(
            "content/orders/\(identifier).yml",
            """
            template: shop
            orderIdentifier: \(identifier)
            data: { status: \(status), shipping: \(shipping) }
            """)
    }
}
