-- q6, average selling price per seller. Each auction sells at its winning bid: the highest placed
-- while it was open (the earliest of equal ones). Taking a seller's sales in the order of their
-- winning bids' times, each sale goes out with the average price of itself and the 10 sales before
-- it (BIGINT: truncated). A higher bid replaces an auction's winner, so the averages it was in change.

CREATE TABLE nexmark_q6 (
    seller BIGINT,
    avg_price BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q6
WITH winners AS (
    SELECT seller, price, sold_at
    FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY price DESC, sold_at ASC) AS place
        FROM (
            SELECT item.id, item.seller, offer.price, offer.`dateTime` AS sold_at
            FROM auction AS item
            JOIN bid AS offer ON offer.auction = item.id
            WHERE offer.`dateTime` BETWEEN item.`dateTime` AND item.expires
        ) AS open_bids
    )
    WHERE place = 1
)
SELECT seller,
       AVG(price) OVER (PARTITION BY seller ORDER BY sold_at ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
FROM winners;
