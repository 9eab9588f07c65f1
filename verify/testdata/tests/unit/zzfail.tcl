start_server {tags {"zz"}} {
    test {Passing one} { r set a b; r get a } {b}
    test {Assertion fails} { assert_equal 1 2 }
    test {Slow thing} { after 10 } {} {slow}
    test {Raises error} { error "boom" }
    test {After the error} { r ping } {PONG}
}
