# Sourced by first-run.sh and tutorial.sh (which set $root, the checkout, and $work, a fresh
# folder): a new user's machine in $work/home, where the toolchain and the crates.io cache stay
# where they are and everything else is new, and the CLI installed from the checkout as the
# README says. Builds are cached under target/first-run (the CLI in release, as `cargo install`
# builds it).
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
export PATH="$CARGO_HOME/bin:$PATH"
export HOME="$work/home"
mkdir -p "$HOME"
export CARGO_INSTALL_ROOT="$HOME/.local"
export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"
export CARGO_TARGET_DIR="$root/target/first-run"
echo "== install the CLI from the checkout: cargo install --locked --path cli" >&2
cargo install --quiet --locked --path "$root/cli"
command -v capi-ext >/dev/null
