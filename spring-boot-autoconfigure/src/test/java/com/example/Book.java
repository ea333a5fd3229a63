package com.example;

/**
 * The README's value type.
 *
 * @param id the id
 * @param title the title
 */
public record Book(long id, String title) {}
