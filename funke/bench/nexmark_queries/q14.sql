-- q14, calculation: the bids between 1 million and 50 million euros (exclusive), each with its price
-- in euros, the part of the day it was placed in (dayTime from 8:00 to 18:59, nightTime up to 6:59
-- and from 20:00, otherTime in the two hours between), and how many times 'c' occurs in its extra
-- field, counted by a Python function (funke/bench/nexmark_functions.py).

CREATE TEMPORARY FUNCTION count_char AS 'funke.bench.nexmark_functions.count_char' LANGUAGE PYTHON;

CREATE TABLE nexmark_q14 (
    auction BIGINT,
    bidder BIGINT,
    price DECIMAL(23, 3),
    bidTimeType VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    c_counts BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q14
SELECT auction, bidder, price * 0.908 AS price,
       CASE
           WHEN HOUR(`dateTime`) BETWEEN 8 AND 18 THEN 'dayTime'
           WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
           ELSE 'otherTime'
       END AS bidTimeType,
       `dateTime`, extra, count_char(extra, 'c') AS c_counts
FROM bid
WHERE price * 0.908 > 1000000 AND price * 0.908 < 50000000;
