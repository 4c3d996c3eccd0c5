-- q5, hot items: in each sliding window of 10 seconds (one starts every 2 seconds), the auctions that
-- got the most bids, with their count. The counts per auction and window are computed once and read
-- twice: for the window's highest count, and for the auctions that reach it (ties all go out).

CREATE TABLE nexmark_q5 (
    auction BIGINT,
    num BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q5
WITH counts AS (
    SELECT auction, window_start, window_end, COUNT(*) AS num
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
),
busiest AS (
    SELECT window_start, window_end, MAX(num) AS most
    FROM counts
    GROUP BY window_start, window_end
)
SELECT counts.auction, counts.num
FROM counts
JOIN busiest ON counts.window_start = busiest.window_start AND counts.window_end = busiest.window_end
WHERE counts.num >= busiest.most;
