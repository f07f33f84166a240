import Foundation

/// `PASSFORGE_SSH_COMMAND`, split into words as a POSIX shell splits a
/// simple command: blanks separate words; `'…'` is literal; in `"…"` a
/// backslash escapes `"`, `\`, `$` and `` ` ``; elsewhere a backslash makes
/// the next character plain. What a shell would expand or run (`$`, `` ` ``,
/// `;`, `|`, `&`, `<`, `>`, `(`, `)`, globs, a leading `~` or `#`) is refused
/// unless quoted: passforge runs the command itself, with no shell, and
/// must not run it differently from what the text reads as.
///
/// rsync's `-e` takes one string and splits it by its own, simpler rule
/// (spaces only; a quote doubled inside quotes stands for itself; no
/// backslashes): `rsyncArgument` spells the same words that way.
struct SSHCommandLine: Sendable, Equatable {
    var words: [String]

    init(parsing text: String) throws(PublishError) {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = text.makeIterator()
        func refuse(_ why: String) -> PublishError {
            PublishError(
                .invalidDestination,
                "PASSFORGE_SSH_COMMAND cannot be read as a command (\(why)): write it as a shell would read a simple command, e.g. ssh -p 2222 -i \"/path/with spaces/key\"; quote any of $ ` ; | & < > ( ) * ? [ ] { } ~ #"
            )
        }
        while let character = characters.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(word) }
                (word, inWord) = ("", false)
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw refuse("a ' is not closed") }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw refuse("a \" is not closed") }
                    if next == "\"" { break }
                    if next == "$" || next == "`" { throw refuse("\(next) inside \"…\" would be expanded by a shell") }
                    if next == "\\" {
                        guard let escaped = characters.next() else { throw refuse("a \" is not closed") }
                        if ["\"", "\\", "$", "`"].contains(escaped) {
                            word.append(escaped)
                        } else if escaped != "\n" {
                            word += "\\\(escaped)"
                        }
                        continue
                    }
                    word.append(next)
                }
            case "\\":
                guard let escaped = characters.next() else { throw refuse("it ends with a backslash") }
                if escaped != "\n" {
                    word.append(escaped)
                    inWord = true
                }
            case "$", "`", ";", "|", "&", "<", ">", "(", ")", "*", "?", "[", "]", "{", "}":
                throw refuse("an unquoted \(character)")
            case "~",
                "#" where !inWord:
                throw refuse("an unquoted \(character) at the start of a word")
            default:
                if character.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                    throw refuse("a control character")
                }
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        guard let program = words.first, !program.isEmpty else { throw refuse("no program") }
        self.words = words
    }

    /// The program: `ssh`, or a path to one.
    var program: String { words[0] }
    /// The options after the program.
    var options: [String] { Array(words.dropFirst()) }

    /// The words as rsync's `-e` splits them back: each in single quotes, a single quote in it doubled.
    var rsyncArgument: String {
        words.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: " ")
    }
}
