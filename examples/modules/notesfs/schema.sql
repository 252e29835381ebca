-- notesfs: the table of the workspace-files example module (MySQL dialect).
CREATE TABLE notes (
  id   INT          NOT NULL AUTO_INCREMENT,
  text VARCHAR(200),
  PRIMARY KEY (id)
);
