import Foundation
import WalletTree

/// Commands run on the destination host through ssh. Each is a fixed script
/// run by `sh -c`; the destination folder is its one argument, quoted, and
/// the paths it works on come on standard input, one per line (tree paths
/// hold no newline). No other text reaches the remote shell.
struct RemoteShell: Sendable {
    var ssh: ExternalProgram
    /// Options from PASSFORGE_SSH_COMMAND after the program name (`-p 2222 -i key …`).
    var sshOptions: [String]
    var userHost: String
    /// The destination folder on the host, relative to the login's home unless absolute.
    var root: String
    var environment: [String: String]

    /// Prints `missing-folder`, `no-state`, `symlink NAME` (state files are never read through a link), or `state`,
    /// then state.json, a NUL byte, downloads.csv, a NUL byte, bundles.json, a NUL byte, landing-pages.txt and a
    /// NUL byte (a missing file is empty), then, each followed by a NUL byte: every `download/*.pkpasses` file
    /// when there is a bundles.json, and every landing file (`download/*.html|.png|.svg`) that landing-pages.txt
    /// does not name when there is one (the host filters them: 100,000 pages would be megabytes of names).
    static let fetchStateScript = """
        [ -d "$1" ] || { echo missing-folder; exit 0; }
        cd -- "$1" || exit 1
        for name in \(TreeLayout.stateFolder) \(TreeLayout.statePath) \(TreeLayout.downloadsListPath) \(TreeLayout.bundleListPath) \(TreeLayout.landingPageListPath) \(TreeLayout.downloadFolder); do
          [ -L "$name" ] && { echo "symlink $name"; exit 0; }
        done
        [ -f \(TreeLayout.statePath) ] || { echo no-state; exit 0; }
        echo state
        cat \(TreeLayout.statePath) || exit 1
        printf "\\000"
        if [ -f \(TreeLayout.downloadsListPath) ]; then cat \(TreeLayout.downloadsListPath) || exit 1; fi
        printf "\\000"
        if [ -f \(TreeLayout.bundleListPath) ]; then cat \(TreeLayout.bundleListPath) || exit 1; fi
        printf "\\000"
        if [ -f \(TreeLayout.landingPageListPath) ]; then cat \(TreeLayout.landingPageListPath) || exit 1; fi
        printf "\\000"
        if [ -f \(TreeLayout.bundleListPath) ]; then
          for file in \(TreeLayout.downloadFolder)/*.pkpasses; do
            if [ -f "$file" ]; then printf "%s\\000" "$file"; fi
          done
        fi
        if [ -f \(TreeLayout.landingPageListPath) ]; then
          for file in \(TreeLayout.downloadFolder)/*.html \(TreeLayout.downloadFolder)/*.png \\
            \(TreeLayout.downloadFolder)/*.svg; do
            if [ -f "$file" ]; then printf "%s\\n" "$file"; fi
          done | awk -F '\t' 'NR == FNR { for (i = 1; i <= NF; i++) named[$i] = 1; next } !($0 in named)' \\
            \(TreeLayout.landingPageListPath) - | tr '\\n' '\\000'
        fi
        exit 0
        """

    /// `real PATH`: fails, saying so, when a folder on the way to PATH (relative) is a symbolic link:
    /// nothing is written or deleted through one (it could point anywhere on the host).
    static let realFoldersFunction = """
        real() {
          p=$1; d=${p%/*}
          while [ "$d" != "$p" ] && [ -n "$d" ]; do
            [ -L "$d" ] && { echo "passforge: $d is a symbolic link; nothing is written or deleted through links in the destination: replace it with a real folder" >&2; return 1; }
            p=$d; d=${d%/*}
          done
          return 0
        }
        """

    static let createFolderScript = #"mkdir -p -- "$1""#

    /// Reads pairs of lines (existing file, link name) and makes each link
    /// name a hard link of the file in one rename, so the name is never
    /// missing (a name already linked, by a run that was killed, is left as
    /// it is: `mv` refuses two names of one file); then flushes the file system, so that everything uploaded so
    /// far is on disk before the state that lists it.
    static let replaceLinksScript = """
        cd -- "$1" || exit 1
        \(realFoldersFunction)
        while IFS= read -r target && IFS= read -r link; do
          real "$link" || exit 4
          [ "$target" -ef "$link" ] && continue
          folder=${link%/*}
          [ -d "$folder" ] || mkdir -p -- "$folder" || exit 1
          staged="$folder/.${link##*/}.publishing"
          ln -f -- "$target" "$staged" && mv -f -- "$staged" "$link" || exit 1
        done
        sync -f . 2>/dev/null || sync
        """

    /// Deletes the files on standard input (one per line; missing ones are
    /// fine), then the folders given as arguments that are left empty.
    static let removeScript = """
        cd -- "$1" || exit 1
        shift
        \(realFoldersFunction)
        while IFS= read -r path; do real "$path" || exit 4; rm -f -- "$path" || exit 1; done
        for folder in "$@"; do real "$folder" && [ ! -L "$folder" ] && rmdir -- "$folder" 2>/dev/null; done
        exit 0
        """

    /// Runs `script` on the host with the root, then `arguments`, as `$1`, `$2`, ….
    /// `outputLimit`: the most bytes taken from the host's answer (the host is not trusted to stop).
    func run(
        _ script: String, arguments: [String] = [], lines: [String] = [], action: String,
        outputLimit: Int = 1 << 20
    ) throws(PublishError) -> ExternalProgram.Outcome {
        let command = (["sh", "-c", script, "passforge", root] + arguments).map(Self.quoted).joined(separator: " ")
        let input = lines.isEmpty ? [] : Array((lines.joined(separator: "\n") + "\n").utf8)
        let outcome = try ssh.run(
            sshOptions + ["--", userHost, command], input: input, environment: environment, outputLimit: outputLimit)
        guard outcome.status == 0 else {
            throw RemoteFailure.explain(
                program: "ssh", status: outcome.status, errorOutput: outcome.errorOutput,
                userHost: userHost, root: root, action: action)
        }
        return outcome
    }

    /// Single quotes for a POSIX shell: `it's` → `'it'\''s'`.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
