-- q11, user sessions: per bidder, sessions of bidding activity (a gap of more than 10 seconds between
-- two bids ends one), with the number of bids in each. A session runs from its first bid to 10
-- seconds after its last.

CREATE TABLE nexmark_q11 (
    bidder BIGINT,
    bid_count BIGINT,
    starttime TIMESTAMP(3),
    endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q11
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
