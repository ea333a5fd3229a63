MERGE INTO product (id, name, price_cents) KEY (id) VALUES
  (1, 'kettle', 2999),
  (2, 'teapot', 1999),
  (3, 'mug', 599),
  (4, 'tray', 1499),
  (5, 'strainer', 399);
