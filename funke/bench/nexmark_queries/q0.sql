-- q0, pass-through: every bid goes out as it came in. Nothing is computed, so what this measures is
-- the cost of making the events, reading them and writing them.

CREATE TABLE nexmark_q0 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q0
SELECT auction, bidder, price, `dateTime`, extra
FROM bid;
