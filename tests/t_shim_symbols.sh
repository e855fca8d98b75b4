#!/bin/sh
# libobsshim.so links only what its exit path runs (docs/architecture.md
# "Build"): no symbol of libobstrace's report code (the objects that
# libobstrace.la adds to libobstrace_core.la: obs-report csv,
# suggest-phases), and none of the core's functions that only obs-report
# calls (the .so is linked with --gc-sections). The symbols are read with
# nm: the report objects' from the archives, the .so's from its symbol
# table (hidden functions are local symbols there).
#
# OBS_SHIM_SO=PATH checks another library (the check's own check: the
# library linked with all of libobstrace must fail it).
b=${OBS_BUILDDIR:-.}
so=${OBS_SHIM_SO:-$b/shim/.libs/libobsshim.so}
core=$b/shim/trace/.libs/libobstrace_core.a
full=$b/shim/trace/.libs/libobstrace.a
# Functions of the core's files that only obs-report calls.
core_report_only="obs_report_phases_csv obs_report_phase_tables obs_json_merge_begin obs_json_merge_part
obs_json_merge_end obs_gzip_fopen obs_call_filter_parse_window obs_call_filter_set_kernel"

for tool in nm ar; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "1..0 # SKIP $tool not found"
        exit 0
    fi
done
for f in "$so" "$core" "$full"; do
    if [ ! -f "$f" ]; then
        echo "1..0 # SKIP $f not built"
        exit 0
    fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/obs-symbols.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..7"
n=0
result() { # result OK|FAIL description
    n=$((n + 1))
    if [ "$1" = OK ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

# The report code: members of libobstrace.a that libobstrace_core.a lacks,
# and the global symbols they define.
ar t "$core" | sort -u >"$tmp/core-members"
ar t "$full" | sort -u >"$tmp/full-members"
comm -13 "$tmp/core-members" "$tmp/full-members" >"$tmp/report-members"
nm -A -g --defined-only "$full" 2>/dev/null | while IFS= read -r line; do
    member=${line#*:}
    member=${member%%:*}
    if grep -qxF "$member" "$tmp/report-members"; then
        echo "$line" | awk '{print $NF}'
    fi
done | sort -u >"$tmp/report-symbols"
if [ -s "$tmp/report-members" ] && grep -qx obs_report_csv "$tmp/report-symbols" &&
    grep -qx obs_report_suggest_phases "$tmp/report-symbols"; then
    result OK "the report code: $(wc -l <"$tmp/report-members") objects, $(wc -l <"$tmp/report-symbols") symbols, obs_report_csv and obs_report_suggest_phases among them"
else
    result FAIL "the report code holds obs_report_csv and obs_report_suggest_phases (members: $(tr '\n' ' ' <"$tmp/report-members"))"
fi

# The core-only names exist (so that their absence below means something).
nm -g --defined-only "$core" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/core-symbols"
missing=
for s in $core_report_only; do
    grep -qxF "$s" "$tmp/core-symbols" || missing="$missing $s"
done
if [ -z "$missing" ]; then
    result OK "libobstrace_core defines the report-only functions checked below"
else
    result FAIL "libobstrace_core does not define:$missing (renamed? update this test)"
fi

# The .so's symbol table, and the check's own check: it finds the report
# symbols where they are (in libobstrace.a).
nm "$so" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/so-symbols"
if grep -qx obs_trace_postprocess "$tmp/so-symbols" && grep -qx obs_trace_write_records "$tmp/so-symbols"; then
    result OK "libobsshim.so has a symbol table with the exit path's functions (obs_trace_postprocess)"
else
    result FAIL "libobsshim.so: no obs_trace_postprocess in nm's output (stripped?)"
fi
nm "$full" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/full-symbols"
if [ -s "$tmp/report-symbols" ] && [ -z "$(comm -23 "$tmp/report-symbols" "$tmp/full-symbols")" ]; then
    result OK "the check finds every report symbol in libobstrace.a"
else
    result FAIL "the check does not find the report symbols in libobstrace.a"
fi

# The checks themselves.
found=$(comm -12 "$tmp/report-symbols" "$tmp/so-symbols" | tr '\n' ' ')
if [ -z "$found" ]; then
    result OK "no symbol of libobstrace's report code in libobsshim.so"
else
    result FAIL "libobsshim.so holds report code: $found"
fi
found=
for s in $core_report_only; do
    grep -qxF "$s" "$tmp/so-symbols" && found="$found $s"
done
if [ -z "$found" ]; then
    result OK "none of the core's report-only functions in libobsshim.so"
else
    result FAIL "libobsshim.so holds functions only obs-report calls:$found"
fi

# The flags and maps every recorded launch reads (OBS_HOT_DATA,
# shim/common/obs_export.h; docs/performance.md): together, in two cache
# lines at most, as the link sorts their section (--sort-section=name).
hot="obs_state obs_phase_on obs_debug_levels obs_names_by_host_fun obs_names_by_handle obs_stream_ids"
lo= hi= seen=0
for sym in $hot; do
    line=$(nm -S "$so" 2>/dev/null | awk -v s="$sym" 'NF == 4 && $4 == s {print $1, $2; exit}')
    [ -n "$line" ] || continue
    a=$((0x${line% *})) e=$((0x${line% *} + 0x${line#* }))
    seen=$((seen + 1))
    if [ -z "$lo" ] || [ "$a" -lt "$lo" ]; then lo=$a; fi
    if [ -z "$hi" ] || [ "$e" -gt "$hi" ]; then hi=$e; fi
done
span=missing
[ "$seen" -eq 6 ] && span=$((hi - lo))
if nm -D "$so" 2>/dev/null | grep -q __asan_; then
    n=$((n + 1))
    echo "ok $n # SKIP an AddressSanitizer build pads each global with red zones"
elif [ "$span" != missing ] && [ "$span" -le 128 ]; then
    result OK "the flags every launch reads lie within $span bytes (128 at most: two cache lines)"
else
    result FAIL "the flags every launch reads ($hot) span $span bytes, over two cache lines (--sort-section?)"
fi
