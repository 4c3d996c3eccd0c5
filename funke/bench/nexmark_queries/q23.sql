-- q23, a three-way join: every bid, with the person who placed it and each auction that person sells.
-- Two regular joins in one FROM; a bidder who sells nothing (or is not known) gives no rows.

CREATE TABLE nexmark_q23 (
    bidder BIGINT,
    price BIGINT,
    channel VARCHAR,
    url VARCHAR,
    bid_extra VARCHAR,
    person_id BIGINT,
    name VARCHAR,
    emailAddress VARCHAR,
    creditCard VARCHAR,
    city VARCHAR,
    state VARCHAR,
    person_extra VARCHAR,
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

INSERT INTO nexmark_q23
SELECT offer.bidder, offer.price, offer.channel, offer.url, offer.extra AS bid_extra,
       bidder.id AS person_id, bidder.name, bidder.emailAddress, bidder.creditCard, bidder.city,
       bidder.state, bidder.extra AS person_extra,
       item.itemName, item.description, item.initialBid, item.reserve,
       item.`dateTime` AS auction_dateTime, item.expires, item.seller, item.category,
       item.extra AS auction_extra
FROM bid AS offer
JOIN person AS bidder ON bidder.id = offer.bidder
JOIN auction AS item ON item.seller = offer.bidder;
