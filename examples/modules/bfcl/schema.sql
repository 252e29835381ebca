-- BFCL multi-turn domain (examples/modules/bfcl): one row per API class
-- of the session. config is the class's initial_config (JSON text, the
-- task's starting state); state is the instance's attributes after the
-- calls so far (JSON text with key order kept: Python dicts are ordered),
-- NULL until the first call loads the config.
CREATE TABLE bfcl_class (
  name   VARCHAR(64) NOT NULL,
  config LONGTEXT    NOT NULL,
  state  LONGTEXT    NULL,
  PRIMARY KEY (name)
);
