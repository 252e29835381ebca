-- tally: named counters (MySQL dialect).
CREATE TABLE tallies (
  name VARCHAR(64) NOT NULL,
  n    BIGINT      NOT NULL,
  PRIMARY KEY (name)
);
