-- q7, highest bid: the bids that match the highest price of a 10-second tumbling window and were
-- placed between the window's start and its end, both included (so a bid at the very end of a window,
-- which belongs to the next one, also counts for this one when its price is this one's highest).
-- The window's highest price is joined back to the bids on the price; the time bounds then filter.

CREATE TABLE nexmark_q7 (
    auction BIGINT,
    price BIGINT,
    bidder BIGINT,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q7
SELECT offer.auction, offer.price, offer.bidder, offer.`dateTime`, offer.extra
FROM bid AS offer
JOIN (
    SELECT window_end, MAX(price) AS top_price
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end
) AS highest ON offer.price = highest.top_price
WHERE offer.`dateTime` BETWEEN highest.window_end - INTERVAL '10' SECOND AND highest.window_end;
