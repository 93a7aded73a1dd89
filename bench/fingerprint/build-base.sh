# Sourced by compare.sh and same-results.sh: build_base COMMIT builds that commit (git archive, tsc)
# into a temporary directory, BASE_DIR, removed on exit, and builds this tree too.
build_base() {
  BASE_DIR=$(mktemp -d)
  trap 'rm -rf "$BASE_DIR"' EXIT
  git archive "$1" | tar -x -C "$BASE_DIR"
  ln -s "$PWD/node_modules" "$BASE_DIR/node_modules"
  (cd "$BASE_DIR" && npx tsc -p tsconfig.json >/dev/null)
  npx tsc -p tsconfig.json >/dev/null
}
