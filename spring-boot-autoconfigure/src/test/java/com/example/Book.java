package com.example;

/**
 * The manual's (docs/manual.md) value type.
 *
 * @param id the id
 * @param title the title
 */
public record Book(long id, String title) {}
