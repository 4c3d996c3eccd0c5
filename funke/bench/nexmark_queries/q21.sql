-- q21, channel ids: the bids whose channel has an id, with it. The four named channels have ids 0 to
-- 3 (whatever the case of their name); any other channel's id is the channel_id parameter of the bid's
-- URL. A bid with neither is left out.

CREATE TABLE nexmark_q21 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel VARCHAR,
    channel_id VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q21
SELECT auction, bidder, price, channel,
       CASE LOWER(channel)
           WHEN 'apple' THEN '0'
           WHEN 'google' THEN '1'
           WHEN 'facebook' THEN '2'
           WHEN 'baidu' THEN '3'
           ELSE REGEXP_EXTRACT(url, '(^|&)channel_id=([^&]*)', 2)
       END AS channel_id
FROM bid
WHERE LOWER(channel) IN ('apple', 'google', 'facebook', 'baidu')
   OR REGEXP_EXTRACT(url, '(^|&)channel_id=([^&]*)', 2) IS NOT NULL;
