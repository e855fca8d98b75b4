-- Collectives matched across ranks: one row per (communicator, sequence
-- number), the same collective on every rank (the shim numbers each
-- communicator's calls alike on all ranks). Per collective: the ranks seen,
-- the arrival skew (first to last rank's call: host begin), the straggler
-- (the rank that called last; a tie goes to the lowest rank), the duration
-- from the last arrival to the last rank's end (the collective cannot
-- complete before every rank is in: the GPU span of the kernels a rank's
-- call launched when its trace has GPU time, else the host call), and bus
-- bandwidth as nccl-tests reckons it: bytes / duration x 2(n-1)/n for an
-- all-reduce, (n-1)/n for all-gather and reduce-scatter, 1 otherwise.
WITH coll AS (
    SELECT rank, tid, api, comm, seq, nranks, bytes, host_begin_ns, host_end_ns
    FROM collectives
    WHERE kind = 'coll' AND comm IS NOT NULL AND seq IS NOT NULL
      AND api NOT IN ('ncclGroupStart', 'ncclGroupEnd')
),
-- The kernel launches each call made, found without a range join: a
-- rank's collective calls and kernel launches in one time line per thread,
-- each launch tagged with the latest collective call begun before it.
events AS (
    SELECT rank, tid, host_begin_ns AS t, 1 AS is_coll, CAST(NULL AS BIGINT) AS gpu_begin_ns,
           CAST(NULL AS BIGINT) AS gpu_end_ns
    FROM coll
    UNION ALL
    SELECT rank, tid, host_begin_ns AS t, 0 AS is_coll, gpu_begin_ns, gpu_end_ns
    FROM calls
    WHERE kind = 'kernel' AND gpu_begin_ns IS NOT NULL
),
tagged AS (
    SELECT rank, tid, t, is_coll, gpu_begin_ns, gpu_end_ns,
           MAX(CASE WHEN is_coll = 1 THEN t END)
               OVER (PARTITION BY rank, tid ORDER BY t, is_coll DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
               AS coll_t
    FROM events
),
coll_gpu AS (
    SELECT c.rank, c.comm, c.seq, MIN(g.gpu_begin_ns) AS gpu_begin_ns, MAX(g.gpu_end_ns) AS gpu_end_ns
    FROM tagged g
    JOIN coll c ON c.rank = g.rank AND c.tid = g.tid AND c.host_begin_ns = g.coll_t
    WHERE g.is_coll = 0 AND g.t <= c.host_end_ns
    GROUP BY c.rank, c.comm, c.seq
),
per_rank AS (
    SELECT c.rank, c.api, c.comm, c.seq, c.nranks, c.bytes, c.host_begin_ns,
           COALESCE(g.gpu_begin_ns, c.host_begin_ns) AS begin_ns,
           COALESCE(g.gpu_end_ns, c.host_end_ns) AS end_ns,
           CASE WHEN g.gpu_begin_ns IS NULL THEN 'host' ELSE 'gpu' END AS time_base,
           ROW_NUMBER() OVER (PARTITION BY c.comm, c.seq ORDER BY c.host_begin_ns DESC, c.rank) AS arrival_from_last
    FROM coll c
    LEFT JOIN coll_gpu g ON g.rank = c.rank AND g.comm = c.comm AND g.seq = c.seq
),
matched AS (
    SELECT comm, seq, MIN(api) AS api, MAX(nranks) AS nranks, COUNT(*) AS ranks, MAX(bytes) AS bytes,
           MIN(host_begin_ns) AS first_arrival_ns, MAX(host_begin_ns) AS last_arrival_ns,
           MAX(CASE WHEN arrival_from_last = 1 THEN rank END) AS straggler_rank,
           MAX(end_ns) - MAX(begin_ns) AS duration_ns,
           MIN(time_base) AS time_base
    FROM per_rank
    GROUP BY comm, seq
)
SELECT comm, seq, api, nranks, ranks, bytes,
       last_arrival_ns - first_arrival_ns AS skew_ns,
       straggler_rank,
       duration_ns,
       CASE WHEN duration_ns > 0 THEN
           bytes * 1.0 / duration_ns *
           CASE WHEN api = 'ncclAllReduce' THEN 2.0 * (nranks - 1) / nranks
                WHEN api IN ('ncclAllGather', 'ncclReduceScatter') THEN (nranks - 1) * 1.0 / nranks
                ELSE 1.0 END
       END AS bus_gb_per_s,
       time_base,
       first_arrival_ns
FROM matched
ORDER BY comm, seq
