-- tau2-bench airline domain as a relational schema (MySQL dialect, weft
-- core/state), the schema of the synthesized server in server.json.
--
-- Conventions:
--   * Every JSON object of db.json whose key order is data (the flights,
--     users and reservations maps, a flight's dates, a user's payment
--     methods) keeps its order in an INT `pos` column, 0-based; export()
--     sorts by it, so the export prints db.json's order.
--   * Lists tau2 nests inside a record and only ever replaces or appends to
--     as a whole (a reservation's flight segments, passengers and payment
--     history; a user's saved passengers and reservation ids) are JSON
--     columns.
--   * A nullable column is NULL exactly when the key is absent (or null) in
--     db.json; tau2's data model prints both as null.
--   * Money is DOUBLE: tau2 keeps gift-card and certificate balances as
--     floats (250.0) and prices as ints.

-- airports: the 20 airports tau2's list_all_airports returns (a constant of
-- tau2's tool code, not part of db.json), in its order.
CREATE TABLE airports (
  iata VARCHAR(3)  NOT NULL,
  pos  INT         NOT NULL,
  city VARCHAR(64) NOT NULL,
  PRIMARY KEY (iata)
);

-- flights: one row per entry of db.json "flights" (the route and schedule;
-- times are "HH:MM:SS", an arrival the next day ends in "+1").
CREATE TABLE flights (
  flight_number                VARCHAR(16) NOT NULL,
  pos                          INT         NOT NULL,
  origin                       VARCHAR(8)  NOT NULL,
  destination                  VARCHAR(8)  NOT NULL,
  scheduled_departure_time_est VARCHAR(16) NOT NULL,
  scheduled_arrival_time_est   VARCHAR(16) NOT NULL,
  PRIMARY KEY (flight_number),
  INDEX flights_origin (origin),
  INDEX flights_destination (destination)
);

-- flight_dates: one row per entry of a flight's "dates" (pos = position in
-- that object). status is one of available, on time, delayed, flying,
-- landed, cancelled; seats_* and price_* are set exactly when status is
-- available (per cabin: basic_economy, economy, business), the times by
-- status as db.json has them ("2024-05-15T06:04:00").
CREATE TABLE flight_dates (
  flight_number                VARCHAR(16) NOT NULL,
  date                         VARCHAR(16) NOT NULL,
  pos                          INT         NOT NULL,
  status                       VARCHAR(16) NOT NULL,
  seats_basic_economy          INT         NULL,
  seats_economy                INT         NULL,
  seats_business               INT         NULL,
  price_basic_economy          INT         NULL,
  price_economy                INT         NULL,
  price_business               INT         NULL,
  actual_departure_time_est    VARCHAR(32) NULL,
  actual_arrival_time_est      VARCHAR(32) NULL,
  estimated_departure_time_est VARCHAR(32) NULL,
  estimated_arrival_time_est   VARCHAR(32) NULL,
  PRIMARY KEY (flight_number, date),
  INDEX flight_dates_date (date, status)
);

-- users: one row per entry of db.json "users"; saved_passengers is a JSON
-- list of {first_name, last_name, dob}, reservations a JSON list of
-- reservation ids (booking appends).
CREATE TABLE users (
  user_id          VARCHAR(64)  NOT NULL,
  pos              INT          NOT NULL,
  first_name       VARCHAR(255) NOT NULL,
  last_name        VARCHAR(255) NOT NULL,
  address1         VARCHAR(255) NOT NULL,
  address2         VARCHAR(255) NULL,
  city             VARCHAR(255) NOT NULL,
  country          VARCHAR(255) NOT NULL,
  state            VARCHAR(255) NOT NULL,
  zip              VARCHAR(32)  NOT NULL,
  email            VARCHAR(255) NOT NULL,
  dob              VARCHAR(16)  NOT NULL,
  membership       VARCHAR(16)  NOT NULL,
  saved_passengers JSON         NOT NULL,
  reservations     JSON         NOT NULL,
  PRIMARY KEY (user_id)
);

-- payment_methods: a user's "payment_methods" object, one row per entry
-- (pos = position in it; a certificate spent on a booking is deleted, a new
-- one goes last). source is credit_card (brand, last_four set), gift_card
-- or certificate (amount set).
CREATE TABLE payment_methods (
  user_id   VARCHAR(64) NOT NULL,
  id        VARCHAR(64) NOT NULL,
  pos       INT         NOT NULL,
  source    VARCHAR(16) NOT NULL,
  brand     VARCHAR(32) NULL,
  last_four VARCHAR(8)  NULL,
  amount    DOUBLE      NULL,
  PRIMARY KEY (user_id, id)
);

-- reservations: one row per entry of db.json "reservations". flights is a
-- JSON list of segments {origin, destination, flight_number, date, price},
-- passengers of {first_name, last_name, dob}, payment_history of
-- {payment_id, amount}; status is NULL or "cancelled".
CREATE TABLE reservations (
  reservation_id   VARCHAR(16) NOT NULL,
  pos              INT         NOT NULL,
  user_id          VARCHAR(64) NOT NULL,
  origin           VARCHAR(8)  NOT NULL,
  destination      VARCHAR(8)  NOT NULL,
  flight_type      VARCHAR(16) NOT NULL,
  cabin            VARCHAR(16) NOT NULL,
  flights          JSON        NOT NULL,
  passengers       JSON        NOT NULL,
  payment_history  JSON        NOT NULL,
  created_at       VARCHAR(32) NOT NULL,
  total_baggages   INT         NOT NULL,
  nonfree_baggages INT         NOT NULL,
  insurance        VARCHAR(8)  NOT NULL,
  status           VARCHAR(16) NULL,
  PRIMARY KEY (reservation_id),
  INDEX reservations_user (user_id)
)
