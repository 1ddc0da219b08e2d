# capi-ext — the commands the README documents.
.PHONY: demo steps test lint unit goldens first-run tutorial package conformance roundtrip differential gotemplate apirules otel e2e dev fuzz bench bench-compare bench-profile bench-musl soak fmt

# The projects the tests generate and build get the workspace's debug setting (see Cargo.toml).
export CARGO_PROFILE_DEV_DEBUG := line-tables-only

## The main job: build and start the example extension with fresh dev certificates, call it.
demo:
	./scripts/demo.sh

## The whole test suite: formatting, lints, unit, integration and doc tests, golden projects,
## a new user's first run and the tutorial, outside the repository, and the crates as packaged.
TEST_STEPS := lint unit goldens first-run tutorial package
test: $(TEST_STEPS)

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --all-features -- -D warnings
	cargo fmt --manifest-path fuzz/Cargo.toml -- --check
	cargo clippy --manifest-path fuzz/Cargo.toml --target-dir target -- -D warnings

unit:
	cargo test --workspace --all-features

goldens:
	./scripts/check-goldens.sh

## Install the CLI in a temporary HOME, init a project outside the repo, build, test, run, verify.
first-run:
	./scripts/first-run.sh

## docs/tutorial.md run as written, in a temporary HOME outside the repo.
tutorial:
	./scripts/tutorial.sh

## The publishable crates packed as crates.io would serve them; a project scaffolded for crates.io
## built and tested against the packed crates.
package:
	./scripts/package.sh

## The steps of `test` and `conformance`, a line each (.ci/run times them one by one).
steps:
	@echo $(TEST_STEPS)
	@echo $(CONFORMANCE_STEPS)

## Cluster API judges the wire format: its Go types round-trip our JSON, its desired-state
## generator computes what render computes, its real manager calls us.
CONFORMANCE_STEPS := roundtrip differential gotemplate apirules otel e2e dev
conformance: $(CONFORMANCE_STEPS)

roundtrip:
	./conformance/scripts/roundtrip.sh

differential:
	./conformance/scripts/differential.sh

## render's Go templates against Go's text/template and sprig (100,000 cases and CAPI's ClusterClasses).
gotemplate:
	./conformance/scripts/gotemplate.sh

## render's API-server rules against the real kube-apiserver (10,000 objects from real CRDs).
apirules:
	./conformance/scripts/apirules.sh

otel:
	./conformance/scripts/otel.sh

e2e:
	./conformance/scripts/e2e.sh

## `capi-ext dev` run as an author runs it: a new project under a real Cluster API, edited live,
## on the newest Cluster API release of the matrix (conformance/versions.env); DEV_RELEASES names
## others (DEV_RELEASES=all: every release of the matrix, about 4 minutes each).
dev:
	bash -ec '. conformance/versions.env; releases="$(DEV_RELEASES)"; \
	  [ -n "$$releases" ] || releases=$$CAPI_VERSION; \
	  [ "$$releases" != all ] || releases=$$(for e in $$CAPI_MATRIX; do echo $${e%%:*}; done); \
	  for capi in $$releases; do \
	    DEV_FLAGS="--capi-version $$capi $(DEV_FLAGS)" ./conformance/scripts/dev.sh; \
	  done'

## Coverage-guided fuzzing (cargo-afl): each target for FUZZ_SECONDS (default 60); exit 1 on a crash.
fuzz:
	./scripts/fuzz.sh

## Benchmarks (not tests): decode → handle → encode of a ~200 KiB GeneratePatches request and of a
## BeforeClusterCreate request; `generate manifests`.
bench:
	cargo bench -p capi-ext --bench generate_patches
	cargo bench -p capi-ext --bench before_cluster_create
	cargo bench -p capi-ext-cli --bench generate

## Side by side: capi-ext against CAPI's Go server, generate against controller-gen, build times.
## Writes results/<timestamp>/report.md and raw.json (about 10 minutes).
bench-compare:
	python3 conformance/bench/run.py

## Where the server's CPU goes under 50-client GeneratePatches (perf record, cpu-clock): each
## sample attributed to decode, handler + encode, body collection, TLS, HTTP/2, logging, scheduler.
## Writes results/profile-<timestamp>/profile.md. Needs perf (Debian: linux-perf).
bench-profile:
	python3 conformance/bench/server_profile.py

## The shipped image's libc (not a test): the bench server built for glibc and for static musl by
## Debian's compiler (installed with apt when missing), side by side under the serving scenarios;
## writes results/musl-<timestamp>/report.md.
bench-musl:
	python3 conformance/bench/musl.py

## Soak (not a test): 10 minutes at 50 concurrent mixed hooks over HTTP/2, the certificate
## rotated every minute; writes results/soak-<timestamp>/report.md with RSS and p99 plots (SVG).
## SOAK_SERVERS=rust,go soaks CAPI's Go server too, after it.
soak:
	python3 conformance/bench/soak.py

fmt:
	cargo fmt --all
