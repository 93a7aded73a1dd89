#!/usr/bin/env bash
# The held-out stream (docs/quality.md, "Held-out stream"): Debian packages
# the tuning corpus does not read, another seed, the same generators, the
# product's batch CLI at its defaults, the same scorer, and the product's
# targets. Never swept: nothing may be tuned on it. Same steps as eval/run.sh.
set -euo pipefail
EVAL_STREAM=heldout exec bash "$(dirname "${BASH_SOURCE[0]}")/run.sh" "$@"
