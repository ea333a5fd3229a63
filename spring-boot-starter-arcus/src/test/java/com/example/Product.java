package com.example;

import java.io.Serializable;

/** The value of the manual's arcus-spring migration example: Java-serialized, allow-listed. */
public record Product(long id, String name) implements Serializable {}
