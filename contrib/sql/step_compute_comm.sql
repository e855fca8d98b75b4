-- Per decode step and rank, the compute and communication split: the
-- step's span (first begin to last end of the calls with that generation
-- and step, in the rank's time base), the time of its compute kernels and
-- of its NCCL kernels (kernels named nccl*: NCCL's ncclDevKernel_*), and
-- per step the slowest rank. One row per (generation, step).
WITH per_rank AS (
    SELECT c.rank, c.generation, c.step,
           MAX(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns ELSE c.host_end_ns END) -
           MIN(CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_begin_ns ELSE c.host_begin_ns END) AS step_ns,
           SUM(CASE WHEN c.kind = 'kernel' AND c.name NOT LIKE 'nccl%' THEN
                   CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns - c.gpu_begin_ns
                        ELSE c.host_end_ns - c.host_begin_ns END
                   ELSE 0 END) AS compute_ns,
           SUM(CASE WHEN c.kind = 'kernel' AND c.name LIKE 'nccl%' THEN
                   CASE WHEN t.kernel_time_base = 'gpu' THEN c.gpu_end_ns - c.gpu_begin_ns
                        ELSE c.host_end_ns - c.host_begin_ns END
                   ELSE 0 END) AS comm_ns
    FROM calls c
    JOIN traces t ON t.rank = c.rank
    WHERE c.step IS NOT NULL
    GROUP BY c.rank, c.generation, c.step
),
ranked AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY generation, step ORDER BY step_ns DESC, rank) AS slowness
    FROM per_rank
)
SELECT generation, step,
       COUNT(*) AS ranks,
       MAX(step_ns) AS slowest_step_ns,
       MIN(step_ns) AS fastest_step_ns,
       MAX(CASE WHEN slowness = 1 THEN rank END) AS slowest_rank,
       SUM(compute_ns) AS compute_ns,
       SUM(comm_ns) AS comm_ns,
       CASE WHEN SUM(compute_ns) + SUM(comm_ns) > 0 THEN SUM(comm_ns) * 1.0 / (SUM(compute_ns) + SUM(comm_ns)) END
           AS comm_share
FROM ranked
GROUP BY generation, step
ORDER BY generation, step
