-- q9, winning bids: each auction with its winning bid, the highest placed while it was open (the
-- earliest of equal ones). The bids placed while their auction was open (a regular join), then a
-- Top-1 per auction over them: a higher bid replaces the auction's row.

CREATE TABLE nexmark_q9 (
    id BIGINT,
    itemName VARCHAR,
    description VARCHAR,
    initialBid BIGINT,
    reserve BIGINT,
    `dateTime` TIMESTAMP(3),
    expires TIMESTAMP(3),
    seller BIGINT,
    category BIGINT,
    extra VARCHAR,
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    bid_dateTime TIMESTAMP(3),
    bid_extra VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q9
SELECT id, itemName, description, initialBid, reserve, `dateTime`, expires, seller, category, extra,
       auction, bidder, price, bid_dateTime, bid_extra
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY price DESC, bid_dateTime ASC) AS place
    FROM (
        SELECT item.id, item.itemName, item.description, item.initialBid, item.reserve, item.`dateTime`,
               item.expires, item.seller, item.category, item.extra,
               offer.auction, offer.bidder, offer.price, offer.`dateTime` AS bid_dateTime, offer.extra AS bid_extra
        FROM auction AS item
        JOIN bid AS offer ON offer.auction = item.id
        WHERE offer.`dateTime` BETWEEN item.`dateTime` AND item.expires
    ) AS open_bids
)
WHERE place = 1;
