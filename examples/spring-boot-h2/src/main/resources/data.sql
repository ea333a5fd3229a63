MERGE INTO product (id, name, price_cents) KEY (id) VALUES
  (1, 'kettle', 2999),
  (2, 'teapot', 1999),
  (3, 'mug', 599),
  (4, 'tray', 1499),
  (5, 'strainer', 399);
MERGE INTO coupon (id, code, percent_off, version) KEY (id) VALUES
  (1, 'WELCOME10', 10, 0),
  (2, 'SPRING25', 25, 0);
