-- Copies by direction and memsets over all ranks, named as obs-report
-- summary's operations ('memcpy HtoD', ..., 'memset'): every call's count
-- and bytes, and the time of those timed in the rank's copy time base (in
-- GPU time, copies without a GPU span count in copies and bytes, not in
-- timed_copies nor total_ns, as summary's time and size tables).
SELECT CASE WHEN c.kind = 'memset' THEN 'memset'
            ELSE CONCAT('memcpy ', COALESCE(c.direction, 'unknown')) END AS operation,
       COUNT(*) AS copies,
       SUM(c.bytes) AS bytes,
       SUM(CASE WHEN t.copy_time_base <> 'gpu' OR c.gpu_begin_ns IS NOT NULL THEN 1 ELSE 0 END) AS timed_copies,
       SUM(CASE WHEN t.copy_time_base = 'gpu' THEN c.gpu_end_ns - c.gpu_begin_ns
                ELSE c.host_end_ns - c.host_begin_ns END) AS total_ns,
       COUNT(DISTINCT c.rank) AS ranks
FROM calls c
JOIN traces t ON t.rank = c.rank
WHERE c.kind IN ('memcpy', 'memset')
GROUP BY CASE WHEN c.kind = 'memset' THEN 'memset'
              ELSE CONCAT('memcpy ', COALESCE(c.direction, 'unknown')) END
ORDER BY total_ns DESC, operation
