-- q8, new users who sell at once: the people who registered and opened an auction in the same
-- 10-second tumbling window. Each side is first made distinct per window (a window GROUP BY without
-- aggregates), then the two are joined on the person and the window.

CREATE TABLE nexmark_q8 (
    id BIGINT,
    name VARCHAR,
    starttime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q8
SELECT newcomer.id, newcomer.name, newcomer.window_start
FROM (
    SELECT id, name, window_start, window_end
    FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY id, name, window_start, window_end
) AS newcomer
JOIN (
    SELECT seller, window_start, window_end
    FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY seller, window_start, window_end
) AS opened
ON newcomer.id = opened.seller
   AND newcomer.window_start = opened.window_start
   AND newcomer.window_end = opened.window_end;
