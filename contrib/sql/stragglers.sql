-- Straggler ranks over all matched collectives: per rank, how often it
-- was the last to arrive and the waiting it caused (the skew of those
-- collectives, summed), worst first. The same matching as
-- collectives_matched.sql (communicator, sequence number).
WITH coll AS (
    SELECT rank, comm, seq, host_begin_ns
    FROM collectives
    WHERE kind = 'coll' AND comm IS NOT NULL AND seq IS NOT NULL
      AND api NOT IN ('ncclGroupStart', 'ncclGroupEnd')
),
ordered AS (
    SELECT rank, comm, seq, host_begin_ns,
           ROW_NUMBER() OVER (PARTITION BY comm, seq ORDER BY host_begin_ns DESC, rank) AS arrival_from_last,
           MAX(host_begin_ns) OVER (PARTITION BY comm, seq) - MIN(host_begin_ns) OVER (PARTITION BY comm, seq)
               AS skew_ns
    FROM coll
)
SELECT rank, COUNT(*) AS collectives_last, SUM(skew_ns) AS skew_caused_ns, MAX(skew_ns) AS max_skew_ns
FROM ordered
WHERE arrival_from_last = 1
GROUP BY rank
ORDER BY skew_caused_ns DESC, rank
