-- q4, average closing price per category. An auction closes at the highest bid placed while it was
-- open (from its own time to its expiry, both included); per category, the average of those prices
-- over the auctions that got a bid. Both steps update as bids come in: a new highest bid takes the
-- auction's old price out of its category's average and puts the new one in. AVG of a BIGINT is a
-- BIGINT (the quotient truncated), as in Flink.

CREATE TABLE nexmark_q4 (
    category BIGINT,
    avg_closing_price BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q4
SELECT category, AVG(closing_price) AS avg_closing_price
FROM (
    SELECT item.id, item.category, MAX(offer.price) AS closing_price
    FROM auction AS item
    JOIN bid AS offer ON offer.auction = item.id
    WHERE offer.`dateTime` BETWEEN item.`dateTime` AND item.expires
    GROUP BY item.id, item.category
) AS closed
GROUP BY category;
