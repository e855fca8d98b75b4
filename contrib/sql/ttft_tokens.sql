-- TTFT and tokens/s per generation across the ranks (obs-report phases'
-- figures of each rank's trace): a tensor-parallel generation's first
-- token is out when its slowest rank has it (max TTFT), and it decodes at
-- the pace of its slowest rank (min tokens/s); the spread says how far the
-- ranks were apart.
SELECT generation,
       COUNT(*) AS ranks,
       MIN(ttft_ms) AS ttft_min_ms,
       MAX(ttft_ms) AS ttft_max_ms,
       AVG(ttft_ms) AS ttft_avg_ms,
       MIN(tokens_per_s) AS tokens_per_s_min,
       MAX(tokens_per_s) AS tokens_per_s_max,
       MAX(decode_steps) AS decode_steps
FROM generations
GROUP BY generation
ORDER BY generation
