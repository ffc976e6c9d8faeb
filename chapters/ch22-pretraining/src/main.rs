fn main() {
    println!("chapter 22: work in progress");
}
