-- q19, top ten bids per auction: each auction's ten highest bids, numbered from 1 (of equal prices,
-- the earlier bid ranks higher). A regular Top-N: an updating result, as higher bids push rows out.

CREATE TABLE nexmark_q19 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel VARCHAR,
    url VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    rank_number BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q19
SELECT auction, bidder, price, channel, url, `dateTime`, extra, rank_number
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, `dateTime` ASC) AS rank_number
    FROM bid
)
WHERE rank_number <= 10;
