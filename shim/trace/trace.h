/* libobstrace's public face: the .obs format and everything that reads or
 * writes it, shared by the shim's exit path and obs-report. The recorded
 * APIs (api_list.h) and the file layout (trace_format.h); the writer
 * (trace_writer.h) and the reader (trace_reader.h); the exports (CSV, Chrome
 * JSON, Perfetto protobuf: trace_csv.h, trace_json.h, trace_perfetto.h,
 * with trace_outbuf.h, trace_phase_slices.h, protobuf_wire.h; zlib:
 * trace_deflate.h; progress for a watcher: trace_progress.h); the reports
 * (summary, phases and TTFT, the serving view, queries and statistics,
 * suggested phase rules: trace_summary.h, trace_phases.h, trace_serving.h,
 * trace_layers.h, trace_layer_parts.h,
 * trace_query.h, trace_stats.h,
 * trace_suggest.h; the ranks of a run side by side and their Perfetto
 * trace: trace_ranks.h, trace_ranks_perfetto.h); what the shim does with a finished trace
 * (trace_postprocess.h) and how it creates files without following links
 * planted at their names (file_create.h); kernel base names
 * (kernel_base_name.h). It depends on nothing else of shim/. */
#ifndef OBS_TRACE_H
#define OBS_TRACE_H

#include "api_list.h"
#include "trace_colls.h"
#include "file_create.h"
#include "kernel_base_name.h"
#include "trace_csv.h"
#include "trace_deflate.h"
#include "trace_format.h"
#include "trace_json.h"
#include "trace_outbuf.h"
#include "trace_perfetto.h"
#include "trace_phase_slices.h"
#include "trace_layer_parts.h"
#include "trace_layers.h"
#include "trace_phases.h"
#include "trace_postprocess.h"
#include "trace_progress.h"
#include "trace_query.h"
#include "trace_ranks.h"
#include "trace_ranks_perfetto.h"
#include "trace_reader.h"
#include "trace_serving.h"
#include "trace_stats.h"
#include "trace_suggest.h"
#include "trace_summary.h"
#include "trace_writer.h"

#endif
