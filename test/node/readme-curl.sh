# Sourced by test/node/readme.test.mjs before the README's sh blocks. curl as the README calls it,
# printing the answer unchanged, with the HTTP status checked: 2xx, or what the line before the
# curl announced with `# expect <status>` (the test turns that comment into README_EXPECT=...).
# --write-out goes to stderr, so `$(curl ...)` captures stay as written. Logs go to fd 3.
set -euo pipefail
README_EXPECT=
curl() {
  local status_file rc status want
  status_file=$(mktemp)
  rc=0
  command curl --write-out '%{stderr}%{http_code}' "$@" 2>"$status_file" || rc=$?
  status=$(tail -c 3 "$status_file")
  want=$README_EXPECT
  README_EXPECT=
  rm -f "$status_file"
  echo "[readme] curl $* -> $status${want:+ (expected $want)}" >&3
  if [ "$rc" -ne 0 ]; then
    echo "[readme] curl failed with exit code $rc" >&3
    return "$rc"
  fi
  if [ -n "$want" ]; then
    # shellcheck disable=SC2254 # the pattern is meant to glob: 4xx -> 4[0-9][0-9]
    case "$status" in ${want//x/[0-9]}) ;; *)
      echo "[readme] expected $want, got $status" >&3
      return 1
      ;;
    esac
  else
    case "$status" in 2??) ;; *)
      echo "[readme] unexpected status $status" >&3
      return 1
      ;;
    esac
  fi
}
