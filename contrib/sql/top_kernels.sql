-- Top kernels over all ranks: launches, total/avg/min/max time per kernel
-- name, in each rank's kernel time base (GPU spans when its trace has them:
-- launches without a span are then left out, as obs-report summary's
-- cuda_gpu_kern_sum does; host API times otherwise). Graph launches are not
-- kernels here (kind 'graph').
SELECT c.name AS name,
       COUNT(*) AS instances,
       SUM(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns - c.gpu_begin_ns
                ELSE c.host_end_ns - c.host_begin_ns END) AS total_ns,
       MIN(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns - c.gpu_begin_ns
                ELSE c.host_end_ns - c.host_begin_ns END) AS min_ns,
       MAX(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns - c.gpu_begin_ns
                ELSE c.host_end_ns - c.host_begin_ns END) AS max_ns,
       COUNT(DISTINCT c.rank) AS ranks
FROM calls c
JOIN traces t ON t.rank = c.rank
WHERE c.kind = 'kernel'
  AND (t.kernel_time_base <> 'gpu' OR c.gpu_begin_ns IS NOT NULL)
GROUP BY c.name
ORDER BY total_ns DESC, name
