-- q10, log to a file system: every bid written to CSV files partitioned by its day and its minute
-- (dt=yyyy-MM-dd/hm=HH:mm), each minute marked complete (a _SUCCESS file) once the watermark is a minute
-- past it. ${NEXMARK_DIR} is the runner's working directory and ${SUBMIT_TIME} the job's start, so each
-- run writes a directory of its own.

CREATE TABLE nexmark_q10 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    dt STRING,
    hm STRING
) PARTITIONED BY (dt, hm) WITH (
    'connector' = 'filesystem',
    'path' = '${NEXMARK_DIR}/output/${SUBMIT_TIME}/q10',
    'format' = 'csv',
    'sink.partition-commit.policy.kind' = 'success-file',
    'sink.partition-commit.trigger' = 'partition-time',
    'partition.time-extractor.timestamp-pattern' = '$dt $hm:00',
    'sink.partition-commit.delay' = '1 min'
);

INSERT INTO nexmark_q10
SELECT auction, bidder, price, `dateTime`, extra,
       DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS dt,
       DATE_FORMAT(`dateTime`, 'HH:mm') AS hm
FROM bid;
