#!/usr/bin/env bash
# The public API of each library crate, checked in as api/CRATE.txt (one sorted line per item:
# modules, types, fields, variants, functions and methods with their signatures, trait items,
# trait impls including Send/Sync/Unpin), so that every change to it shows as a reviewed diff.
#
#   scripts/public-api.sh           regenerate api/*.txt (after a deliberate API change: run it
#                                   and commit the api/ diff with the change)
#   scripts/public-api.sh --check   regenerate into a temp dir and diff against api/; prints the
#                                   diff and exits 1 on any difference (CI runs this)
#
# How: rustdoc's JSON output (`--output-format json`, unstable, so RUSTC_BOOTSTRAP=1 on the
# stable toolchain) for every published library crate with all features, read by
# scripts/public-api/render.py (python3, standard library only). No tool to install; the JSON
# format is tied to the toolchain, so a new rustc may change the listings' wording (regenerate)
# or need render.py updated (it warns on a format version it has not been checked against).
# Builds into target/public-api (under CARGO_TARGET_DIR if set) so it does not invalidate the
# normal build's artifacts.
set -euo pipefail

usage() { echo "usage: $0 [--check]" >&2; exit 2; }
check=0
case "${1-}" in
    "") ;;
    --check) check=1 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
for tool in cargo python3; do
    command -v "$tool" >/dev/null || { echo "public-api.sh: $tool not found" >&2; exit 1; }
done

target="${CARGO_TARGET_DIR:-$root/target}/public-api"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Library crates that are published (examples is publish = false).
cargo metadata --format-version 1 --no-deps --offline >"$work/metadata.json" 2>"$work/err" \
    || cargo metadata --format-version 1 --no-deps >"$work/metadata.json" 2>"$work/err" \
    || { cat "$work/err" >&2; echo "public-api.sh: cargo metadata failed" >&2; exit 1; }
mapfile -t crates < <(python3 - "$work/metadata.json" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1]))
members = set(meta["workspace_members"])
for p in meta["packages"]:
    if p["id"] in members and p.get("publish") != [] and any("lib" in t["kind"] for t in p["targets"]):
        print(p["name"])
EOF
)
[ ${#crates[@]} -gt 0 ] || { echo "public-api.sh: no library crates found" >&2; exit 1; }

pkgs=()
for c in "${crates[@]}"; do pkgs+=(-p "$c"); done
rm -f "$target"/doc/*.json
if ! RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-Z unstable-options --output-format json" \
    cargo doc --quiet --no-deps --all-features --lib "${pkgs[@]}" --target-dir "$target"; then
    echo "public-api.sh: cargo doc (rustdoc JSON) failed" >&2
    exit 1
fi

out="$root/api"
[ $check = 1 ] && out="$work/api"
mkdir -p "$out"
for c in "${crates[@]}"; do
    json="$target/doc/${c//-/_}.json"
    [ -f "$json" ] || { echo "public-api.sh: rustdoc wrote no $json" >&2; exit 1; }
    python3 scripts/public-api/render.py "$json" >"$out/$c.txt"
done

if [ $check = 0 ]; then
    # Listings of crates that are gone.
    for f in api/*.txt; do
        name="$(basename "$f" .txt)"
        printf '%s\n' "${crates[@]}" | grep -qxF "$name" || rm -v "$f"
    done
    echo "public-api.sh: wrote api/{$(IFS=,; echo "${crates[*]}")}.txt"
    exit 0
fi

if diff -ru "$root/api" "$out" >"$work/diff"; then
    echo "public-api.sh: api/*.txt match the public API of ${crates[*]}"
else
    sed -e "s|$work/api|api (now)|g" -e "s|$root/api|api (checked in)|g" "$work/diff"
    echo >&2
    echo "public-api.sh: the public API differs from api/*.txt (above: - checked in, + now)." >&2
    echo "If the change is deliberate, run scripts/public-api.sh and commit api/ with it." >&2
    exit 1
fi
