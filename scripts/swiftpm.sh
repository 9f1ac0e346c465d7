# Sourced by the scripts that build or test: `swiftpm ARGS…` runs `swift ARGS…` with a temporary folder of its own,
# removed when it returns. SwiftPM itself leaves five or six empty TemporaryDirectory.* folders in $TMPDIR at every
# `swift build` and `swift test` (the toolchain's, not Herald's code: the test binary run alone leaves none); this
# keeps them, and anything a test run leaves in its temporary folder, out of /tmp.
swiftpm() {
  local tmp status=0
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-swiftpm.XXXXXX")
  TMPDIR="$tmp" swift "$@" || status=$?
  rm -rf "$tmp"
  return "$status"
}
