#!/bin/sh
# The layering of shim/ over its #include lines (tests/layers_check.py,
# docs/architecture.md "Layers"): no include cycle, no dependency pointing
# up, other folders reach a layer through its public header only.
if [ -z "${OBS_PYTHON3:-}" ]; then
    echo "1..0 # SKIP python3 not found by configure"
    exit 0
fi
exec "$OBS_PYTHON3" "${OBS_SRCDIR:-.}/tests/layers_check.py" "${OBS_SRCDIR:-.}"
