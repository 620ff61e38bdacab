# Sourced (by bash and by zsh) by test/node/readme.test.mjs before the README's sh blocks: curl as
# the README calls it, printing the answer unchanged, with the HTTP status checked: 2xx, or what
# the block's fence announced (```sh expect=401; the test sets README_EXPECT for its first curl).
# --write-out goes to stderr, so `$(curl ...)` captures stay as written. Logs go to fd 3.
set -euo pipefail
README_EXPECT=
curl() {
  local status_file rc code want
  status_file=$(mktemp)
  rc=0
  command curl --write-out '%{stderr}%{http_code}' "$@" 2>"$status_file" || rc=$?
  code=$(tail -c 3 "$status_file")
  want=$README_EXPECT
  README_EXPECT=
  rm -f "$status_file"
  echo "[readme] curl $* -> $code${want:+ (expected $want)}" >&3
  if [ "$rc" -ne 0 ]; then
    echo "[readme] curl failed with exit code $rc" >&3
    return "$rc"
  fi
  case "$want" in
    "") case "$code" in 2??) ;; *) echo "[readme] unexpected status $code" >&3; return 1 ;; esac ;;
    ?xx) [ "${code%??}" = "${want%xx}" ] || { echo "[readme] expected $want, got $code" >&3; return 1; } ;;
    *) [ "$code" = "$want" ] || { echo "[readme] expected $want, got $code" >&3; return 1; } ;;
  esac
}
