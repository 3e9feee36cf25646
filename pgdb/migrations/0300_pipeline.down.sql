DROP FUNCTION pipeline_end_job(bigint);
DROP TABLE pipeline_jobs;
DROP TABLE pipeline_aliases;
DROP TABLE pipeline_batches;
DROP TABLE pipeline_letters;
DROP TABLE pipeline_mailings;
