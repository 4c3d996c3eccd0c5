-- funke's Nexmark suite: the table of events every query reads.
--
-- An online auction in one stream: each row is one event, and event_type says which of the three
-- ROW columns carries it (0: a person registers, 1: an auction opens, 2: a bid is placed); the other
-- two are NULL. funke's nexmark connector makes the rows (funke/connectors/nexmark.py). `dateTime` is
-- the event's own time whatever its kind, and the time attribute: events come in time order, and the
-- watermark trails them by 4 seconds.
--
-- The placeholders in the options are the runner's settings (funke.bench.nexmark.Settings), under the
-- names Nexmark's own runner uses, so a directory of these files and a checkout of Nexmark's run alike.
CREATE TABLE datagen (
    event_type INT,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR,
               state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
                `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
            `dateTime` TIMESTAMP(3), extra VARCHAR>,
    `dateTime` AS COALESCE(person.`dateTime`, auction.`dateTime`, bid.`dateTime`),
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '${TPS}',
    'next-event.rate' = '${TPS}',
    'events.num' = '${EVENTS_NUM}',
    'person.proportion' = '${PERSON_PROPORTION}',
    'auction.proportion' = '${AUCTION_PROPORTION}',
    'bid.proportion' = '${BID_PROPORTION}'
);
