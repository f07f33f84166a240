#!/usr/bin/env bash
# Commit subjects of at most 72 characters, the reasons in the body after one blank line.
#
# As git's commit-msg hook (git passes the message's file), refusing the commit:
#   ln -s ../../scripts/check-commit-subjects.sh .git/hooks/commit-msg
# On a range of commits, e.g. a branch before it is pushed:
#   scripts/check-commit-subjects.sh --range origin/main..HEAD
# Not part of `make test`: the history before the rule has longer subjects, and a clone's history is not the
# change under test.
set -euo pipefail
limit=72
status=0

check() {  # where, message (subject on its first line)
    local where=$1 message=$2 subject second
    subject=$(printf '%s\n' "$message" | sed -n 1p)
    second=$(printf '%s\n' "$message" | sed -n 2p)
    if [ -z "$subject" ]; then
        echo "$where: the subject line is empty; say what the commit changes in at most $limit characters" >&2
        status=1
    elif [ "${#subject}" -gt "$limit" ]; then
        echo "$where: the subject is ${#subject} characters, over $limit: \"$subject\"." >&2
        echo "  Shorten it to what changed; put the reasons in the body, after a blank line." >&2
        status=1
    fi
    if [ -n "$second" ]; then
        echo "$where: the second line is not blank; leave one blank line between the subject and the body" >&2
        status=1
    fi
}

if [ "${1:-}" = "--range" ]; then
    [ $# -eq 2 ] || { echo "usage: $0 --range REV1..REV2 | $0 MESSAGE_FILE" >&2; exit 2; }
    for commit in $(git rev-list --no-merges "$2"); do
        check "commit $(git rev-parse --short "$commit")" "$(git log -1 --format=%B "$commit")"
    done
elif [ $# -eq 1 ] && [ -f "$1" ]; then
    # The message as the editor left it: git drops lines starting with '#' (its help text) and leading blank lines.
    message=$(grep -v '^#' "$1" | sed '/./,$!d')
    check "commit message" "$message"
else
    echo "usage: $0 --range REV1..REV2 | $0 MESSAGE_FILE (as .git/hooks/commit-msg)" >&2
    exit 2
fi
exit $status
