-- q1, currency conversion: each bid with its price in euros, at 0.908 euro to the dollar. A BIGINT
-- times the DECIMAL(3, 3) literal is a DECIMAL(23, 3): exact cents, no floating point.

CREATE TABLE nexmark_q1 (
    auction BIGINT,
    bidder BIGINT,
    price DECIMAL(23, 3),
    `dateTime` TIMESTAMP(3),
    extra VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q1
SELECT auction, bidder, price * 0.908 AS price, `dateTime`, extra
FROM bid;
