-- Time per phase over all ranks, as obs-report summary's phase table
-- defines it: per phase range, the span from the first begin to the last
-- end of the calls that range labels itself (GPU spans in GPU time: calls
-- without one do not count; host API times otherwise), summed over the
-- phase's ranges; calls, launches (calls that queue device work: kernels,
-- graph launches, copies, memsets) and kernels count all it labels.
WITH per_range AS (
    SELECT c.rank, c.range_id, c.phase,
           MIN(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_begin_ns ELSE c.host_begin_ns END) AS first_ns,
           MAX(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns ELSE c.host_end_ns END) AS last_ns,
           COUNT(*) AS calls,
           SUM(CASE WHEN c.kind IN ('kernel', 'graph', 'memcpy', 'memset') THEN 1 ELSE 0 END) AS launches,
           SUM(CASE WHEN c.kind = 'kernel' THEN 1 ELSE 0 END) AS kernels
    FROM calls c
    JOIN traces t ON t.rank = c.rank
    WHERE c.range_id IS NOT NULL
    GROUP BY c.rank, c.range_id, c.phase
)
SELECT phase,
       COUNT(*) AS ranges,
       SUM(COALESCE(last_ns - first_ns, 0)) AS time_ns,
       SUM(calls) AS calls,
       SUM(launches) AS launches,
       SUM(kernels) AS kernels,
       COUNT(DISTINCT rank) AS ranks
FROM per_range
GROUP BY phase
ORDER BY time_ns DESC, phase
