-- q3, local item suggestion: who sells in category 10 from Oregon, Idaho or California, and which
-- auctions. A regular join of auctions and people: each auction meets its seller whichever came first.

CREATE TABLE nexmark_q3 (
    name VARCHAR,
    city VARCHAR,
    state VARCHAR,
    id BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q3
SELECT seller.name, seller.city, seller.state, item.id
FROM auction AS item
JOIN person AS seller ON item.seller = seller.id
WHERE item.category = 10 AND seller.state IN ('OR', 'ID', 'CA');
