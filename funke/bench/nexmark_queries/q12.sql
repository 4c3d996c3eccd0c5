-- q12, processing-time windows: per bidder, the bids funke processed in each 10-second tumbling
-- window of the machine's clock. Which window a bid lands in depends on when it was processed, not on
-- the bid: only each bidder's total over all windows is fixed by the events.

CREATE TABLE nexmark_q12 (
    bidder BIGINT,
    bid_count BIGINT,
    starttime TIMESTAMP(3),
    endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

CREATE VIEW q12_bids AS
SELECT bidder, PROCTIME() AS processed_at
FROM bid;

INSERT INTO nexmark_q12
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(TUMBLE(TABLE q12_bids, DESCRIPTOR(processed_at), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
