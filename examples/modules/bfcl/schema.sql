-- BFCL multi-turn domain (examples/modules/bfcl): one row per API class
-- of the session. config is the class's initial_config (JSON text, the
-- task's starting state); state is NULL until the first call loads the
-- config, then the instance's attribute names in order (a JSON list),
-- each attribute's value (JSON text with key order kept: Python dicts are
-- ordered) a bfcl_attr row, so a change shows as the attributes it
-- changes.
CREATE TABLE bfcl_class (
  name   VARCHAR(64) NOT NULL,
  config LONGTEXT    NOT NULL,
  state  LONGTEXT    NULL,
  PRIMARY KEY (name)
);

CREATE TABLE bfcl_attr (
  class VARCHAR(64)  NOT NULL,
  attr  VARCHAR(128) NOT NULL,
  value LONGTEXT     NOT NULL,
  PRIMARY KEY (class, attr)
);

-- GorillaFileSystem's tree is in the workspace files; this is the order
-- of each directory's entries (Python dict insertion order, which ls and
-- find show), one row per workspace path: entries of a directory sort by
-- ord.
CREATE TABLE bfcl_fs_entry (
  path VARCHAR(4096) NOT NULL,
  ord  BIGINT        NOT NULL,
  PRIMARY KEY (path)
);
