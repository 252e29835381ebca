-- c-notes: the one table the module owns (MySQL dialect, weft core/state).
CREATE TABLE notes (
  id   INT          NOT NULL AUTO_INCREMENT,
  text VARCHAR(200) NOT NULL,
  PRIMARY KEY (id)
);
