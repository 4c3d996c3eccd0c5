-- q20, bids with their auction: every bid on a category-10 auction, with the auction's columns. A
-- regular join: a bid and its auction meet whichever comes first.

CREATE TABLE nexmark_q20 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel VARCHAR,
    url VARCHAR,
    bid_dateTime TIMESTAMP(3),
    bid_extra VARCHAR,
    itemName VARCHAR,
    description VARCHAR,
    initialBid BIGINT,
    reserve BIGINT,
    auction_dateTime TIMESTAMP(3),
    expires TIMESTAMP(3),
    seller BIGINT,
    category BIGINT,
    auction_extra VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q20
SELECT offer.auction, offer.bidder, offer.price, offer.channel, offer.url,
       offer.`dateTime` AS bid_dateTime, offer.extra AS bid_extra,
       item.itemName, item.description, item.initialBid, item.reserve,
       item.`dateTime` AS auction_dateTime, item.expires, item.seller, item.category,
       item.extra AS auction_extra
FROM bid AS offer
JOIN auction AS item ON offer.auction = item.id
WHERE item.category = 10;
