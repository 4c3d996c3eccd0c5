-- q13, enrichment from a side input: each bid looked up, by its auction id modulo 10,000, in a small
-- CSV file of (key, value) rows that the runner writes to ${NEXMARK_DIR}/data/side_input.txt. A lookup
-- join as of each bid's processing time; a bid whose key is not in the file is left out.

CREATE TABLE side_input (
    key BIGINT,
    `value` VARCHAR
) WITH (
    'connector' = 'filesystem',
    'path' = '${NEXMARK_DIR}/data/side_input.txt',
    'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    `dateTime` TIMESTAMP(3),
    `value` VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q13
SELECT offer.auction, offer.bidder, offer.price, offer.`dateTime`, side.`value`
FROM (SELECT *, PROCTIME() AS looked_up_at FROM bid) AS offer
JOIN side_input FOR SYSTEM_TIME AS OF offer.looked_up_at AS side
  ON MOD(offer.auction, 10000) = side.key;
